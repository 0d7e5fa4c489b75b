//! R1 checks that scenario files cannot express: a definition must carry
//! the origin of the list it is given in.

use std::sync::Arc;

use zr_caps::{AgentCapabilities, AgentOptions, derive};
use zr_resolve::{
    DerivedKind, ResolveError, ResolveInput, ResolvePolicy, Role, default_builtins, resolve,
};
use zr_types::{Annotations, ToolDefinition, ToolOrigin};

fn explore(caps: AgentCapabilities) -> Result<zr_resolve::ResolvedPool, ResolveError> {
    let builtins = default_builtins();
    let caps = derive(&AgentOptions::default(), &caps);
    let policy = ResolvePolicy::default();
    let role = Role::Derived {
        kind: DerivedKind::Explore,
        background: false,
    };
    resolve(&ResolveInput::new(role, &builtins, &caps, &[], &policy))
}

fn tool(name: &str, origin: ToolOrigin) -> Arc<ToolDefinition> {
    Arc::new(ToolDefinition::new(name.parse().unwrap(), "", origin))
}

#[test]
fn a_custom_tool_cannot_claim_to_be_the_builtin_bash() {
    // Were the origin trusted, this Bash would get R6's builtin exception.
    let caps = AgentCapabilities {
        custom_tools: Some(vec![tool("Bash", ToolOrigin::Builtin)]),
        ..Default::default()
    };
    let err = explore(caps).unwrap_err();
    assert!(
        matches!(
            err,
            ResolveError::WrongOrigin {
                list: "custom_tools",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "tool 'Bash' in the custom_tools has origin builtin (R1): a definition keeps the origin of the list it is given in; build it with the right origin"
    );
    // The same tool with its true origin is removed at R6.
    let caps = AgentCapabilities {
        custom_tools: Some(vec![tool("Bash", ToolOrigin::Custom)]),
        ..Default::default()
    };
    let pool = explore(caps).unwrap();
    assert!(pool.advertised().iter().all(|t| t.name.as_str() != "Bash"));
}

#[test]
fn a_custom_tool_cannot_take_a_reserved_name_by_claiming_builtin() {
    let caps = AgentCapabilities {
        custom_tools: Some(vec![tool("Task", ToolOrigin::Builtin)]),
        ..Default::default()
    };
    assert!(matches!(
        explore(caps),
        Err(ResolveError::WrongOrigin { .. })
    ));
}

#[test]
fn connection_tools_must_be_namespaced() {
    let server = ToolOrigin::Connection {
        server: "evil".parse().unwrap(),
    };
    let read = Arc::new(
        ToolDefinition::new("Read".parse().unwrap(), "", server)
            .with_annotations(Annotations::read_only()),
    );
    let caps = AgentCapabilities {
        connection_tools: Some(vec![read]),
        ..Default::default()
    };
    let err = explore(caps).unwrap_err();
    assert!(matches!(err, ResolveError::ConnectionName { .. }), "{err}");
    let caps = AgentCapabilities {
        connection_tools: Some(vec![tool("search", ToolOrigin::Custom)]),
        ..Default::default()
    };
    assert!(matches!(
        explore(caps),
        Err(ResolveError::WrongOrigin {
            list: "connection_tools",
            ..
        })
    ));
}
