//! JSON in and out, as the Python side reads and writes it.
//!
//! Reading: an event line is one object whose keys each come once, at any depth
//! (`strict_json`). Anything this reader is not sure the Python path would take the
//! same way (a float, a key given twice, invalid text) makes it decline the line; the
//! Python path then judges it, so declining is always safe.
//!
//! Writing: the bytes orjson writes (compact, UTF-8, keys in their order), which are
//! also the bytes `json.dumps(ensure_ascii=False, separators=(",", ":"))` writes for
//! strings, integers, booleans, null, lists and objects: the digests depend on it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// A string as it was in the line: borrowed when it held no escape.
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A string or null (`Option<Text>` would also take a missing value as null).
pub enum Nullable<'a> {
    Null,
    Value(Text<'a>),
}

impl<'de> de::Deserialize<'de> for Nullable<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NullableVisitor;
        impl<'de> Visitor<'de> for NullableVisitor {
            type Value = Nullable<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Nullable::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Nullable::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Ok(Nullable::Value(de::Deserialize::deserialize(d)?))
            }
        }
        deserializer.deserialize_option(NullableVisitor)
    }
}

/// Any JSON value but a float (declined: its rendering is orjson's to choose).
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Str(Cow<'a, str>),
    List(Vec<Value<'a>>),
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'de> de::Deserialize<'de> for Value<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value without floats")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Value::UInt(v))
    }
    fn visit_f64<E: de::Error>(self, _v: f64) -> Result<Self::Value, E> {
        Err(E::custom("a float"))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Value::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Value::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value<'de>>()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Value<'de>)> = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            if members.iter().any(|(seen, _)| *seen == key) {
                return Err(de::Error::custom("a key given twice"));
            }
            let value = map.next_value::<Value<'de>>()?;
            members.push((key, value));
        }
        Ok(Value::Object(members))
    }
}

/// The kind of value a member is read as.
#[derive(Clone, Copy)]
pub enum MemberKind {
    Text,
    Nullable,
    Value,
}

/// A member's value, read as its field asks.
pub enum Member<'a> {
    Text(Text<'a>),
    Nullable(Nullable<'a>),
    Value(Value<'a>),
}

/// Reads one JSON object (and nothing after it but whitespace). `classify` names each
/// key's field and kind, or declines the line (None); `store` takes the value, or
/// declines the line (false). None when the line is declined or is not such an object.
pub fn read_object<'de, C, S>(data: &'de [u8], classify: C, store: S) -> Option<()>
where
    C: Fn(&str) -> Option<(usize, MemberKind)>,
    S: FnMut(usize, Member<'de>) -> bool,
{
    let mut deserializer = serde_json::Deserializer::from_slice(data);
    deserializer.deserialize_map(ObjectVisitor { classify, store }).ok()?;
    deserializer.end().ok()
}

struct ObjectVisitor<C, S> {
    classify: C,
    store: S,
}

impl<'de, C, S> Visitor<'de> for ObjectVisitor<C, S>
where
    C: Fn(&str) -> Option<(usize, MemberKind)>,
    S: FnMut(usize, Member<'de>) -> bool,
{
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let Some((field, kind)) = (self.classify)(&key) else {
                return Err(de::Error::custom("declined"));
            };
            let member = match kind {
                MemberKind::Text => Member::Text(map.next_value()?),
                MemberKind::Nullable => Member::Nullable(map.next_value()?),
                MemberKind::Value => Member::Value(map.next_value()?),
            };
            if !(self.store)(field, member) {
                return Err(de::Error::custom("declined"));
            }
        }
        Ok(())
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON string as orjson writes it: `"` and `\` escaped, control characters as
/// `\b \t \n \f \r` or `\u00XX`, everything else as it is.
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(byte >> 4) as usize]);
            out.push(HEX[(byte & 0xf) as usize]);
        } else {
            out.extend_from_slice(escape);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::UInt(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Str(s) => write_str(out, s),
        Value::List(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}
