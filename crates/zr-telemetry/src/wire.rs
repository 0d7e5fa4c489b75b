//! Protocol Buffers on the wire, as far as OTLP needs it: varints, tags,
//! length-delimited fields, and an OTLP `KeyValue` attribute written
//! whole (a span's attributes are written as they are set; the export
//! copies the bytes).

pub(crate) use zr_engine::AttributeValue as AttrValue;

/// Wire types.
pub(crate) const VARINT: u32 = 0;
pub(crate) const FIXED64: u32 = 1;
pub(crate) const LEN: u32 = 2;
pub(crate) const FIXED32: u32 = 5;

/// Appends the attribute `key` = `value` to `out` as field `field` (a
/// `KeyValue` message: its tag, length, key and `AnyValue`). Returns where
/// a string value's bytes are in `out` (for a span named after it).
pub(crate) fn key_value(
    out: &mut Vec<u8>,
    field: u32,
    key: &str,
    value: AttrValue<'_>,
) -> Option<(usize, usize)> {
    let key_len = string_field_len(1, key);
    match value {
        AttrValue::Str(text) => {
            let any = message_field_len(1, text.len());
            prefix(out, field, key, key_len + message_field_len(2, any), any);
            short_header(out, 1, text.len());
            let at = out.len();
            out.extend_from_slice(text.as_bytes());
            Some((at, text.len()))
        }
        AttrValue::Bool(b) => {
            prefix(out, field, key, key_len + message_field_len(2, 2), 2);
            out.extend_from_slice(&[2 << 3 | VARINT as u8, u8::from(b)]);
            None
        }
        AttrValue::I64(i) => {
            let any = 1 + varint_len(i64_bits(i));
            prefix(out, field, key, key_len + message_field_len(2, any), any);
            tag(out, 3, VARINT);
            varint(out, i64_bits(i));
            None
        }
        AttrValue::F64(x) => {
            prefix(out, field, key, key_len + message_field_len(2, 9), 9);
            tag(out, 4, FIXED64);
            out.extend_from_slice(&x.to_le_bytes());
            None
        }
        AttrValue::StrArray(items) => {
            let array: usize = items
                .iter()
                .map(|item| message_field_len(1, message_field_len(1, item.len())))
                .sum();
            let any = message_field_len(5, array);
            header(out, field, key_len + message_field_len(2, any));
            string_field(out, 1, key);
            header(out, 2, any);
            header(out, 5, array);
            for item in items {
                header(out, 1, message_field_len(1, item.len()));
                header(out, 1, item.len());
                out.extend_from_slice(item.as_bytes());
            }
            None
        }
    }
}

/// A `KeyValue`'s framing up to its value: its tag and length (`kv`
/// bytes), its key, and the tag and length of its `AnyValue` (`any`
/// bytes). Most attributes are under 128 bytes, so that every length is
/// one byte: then it is three copies, with room reserved once.
fn prefix(out: &mut Vec<u8>, field: u32, key: &str, kv: usize, any: usize) {
    if kv < 128 && field < 16 {
        out.reserve(2 + kv);
        // All under 128: each length is its one byte.
        out.extend_from_slice(&[(field << 3 | LEN) as u8, kv as u8]);
        if !key.is_empty() {
            out.extend_from_slice(&[1 << 3 | LEN as u8, key.len() as u8]);
            out.extend_from_slice(key.as_bytes());
        }
        out.extend_from_slice(&[2 << 3 | LEN as u8, any as u8]);
    } else {
        header(out, field, kv);
        string_field(out, 1, key);
        header(out, 2, any);
    }
}

/// A length-delimited field's tag and length, a short one in one copy.
fn short_header(out: &mut Vec<u8>, field: u32, len: usize) {
    if len < 128 && field < 16 {
        out.extend_from_slice(&[(field << 3 | LEN) as u8, len as u8]);
    } else {
        header(out, field, len);
    }
}

/// The `KeyValue` entries of field `field` in `bytes` (as [`key_value`]
/// writes them): each entry's range and key.
pub(crate) fn entries(bytes: &[u8]) -> impl Iterator<Item = (std::ops::Range<usize>, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        let (_tag, n) = read_varint(&bytes[at..])?;
        at += n;
        let (len, n) = read_varint(&bytes[at..])?;
        at += n;
        let body = at;
        at += usize::try_from(len).ok()?;
        // The key: field 1, a length, the bytes.
        let (_key_tag, n) = read_varint(bytes.get(body..)?)?;
        let (key_len, m) = read_varint(bytes.get(body + n..)?)?;
        let key_start = body + n + m;
        let key = bytes.get(key_start..key_start + usize::try_from(key_len).ok()?)?;
        Some((start..at, key))
    })
}

/// A varint at the start of `bytes`: its value and length.
fn read_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0_u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
}

/// An `int64` on the wire: its two's complement bits.
pub(crate) fn i64_bits(i: i64) -> u64 {
    u64::from_ne_bytes(i.to_ne_bytes())
}

pub(crate) fn varint_len(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits, with the continuation bit.
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

pub(crate) fn tag_len(field: u32) -> usize {
    varint_len(u64::from(field << 3))
}

/// A length-delimited field's tag and length.
pub(crate) fn header(out: &mut Vec<u8>, field: u32, len: usize) {
    tag(out, field, LEN);
    varint(out, len as u64);
}

/// A message field of `len` bytes (always written, as `prost` writes a
/// message that is present).
pub(crate) fn message_field_len(field: u32, len: usize) -> usize {
    tag_len(field) + varint_len(len as u64) + len
}

/// A proto3 string or bytes field: left out when empty.
pub(crate) fn string_field_len(field: u32, text: &str) -> usize {
    bytes_field_len(field, text.len())
}

pub(crate) fn bytes_field_len(field: u32, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        message_field_len(field, len)
    }
}

pub(crate) fn string_field(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes_field(out, field, text.as_bytes());
}

pub(crate) fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    if !bytes.is_empty() {
        header(out, field, bytes.len());
        out.extend_from_slice(bytes);
    }
}

/// A proto3 integer field: left out when zero.
pub(crate) fn varint_field_len(field: u32, v: u64) -> usize {
    if v == 0 {
        0
    } else {
        tag_len(field) + varint_len(v)
    }
}

pub(crate) fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        tag(out, field, VARINT);
        varint(out, v);
    }
}

pub(crate) fn fixed64_field(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests;
