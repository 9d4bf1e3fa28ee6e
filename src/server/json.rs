//! JSON text for stdout: byte for byte what `serde_json::to_writer` writes,
//! with strings escaped sixteen bytes at a time.
//!
//! An answer is mostly one string, a whole `SKILL.md`, and serde_json looks
//! at a string one byte at a time: 15% of a first call's CPU at 10,000
//! skills went there (benches/README.md, "Writing an answer"). This
//! serializer copies sixteen bytes ahead and checks them for what JSON
//! escapes (a control character, `"`, `\`) eight at a time, in two words; a
//! `SKILL.md` has one escape in about 35 bytes, mostly a line break.
//! The rest is serde_json's: numbers and booleans are written by it, so they
//! cannot differ; the structure is its compact format (no spaces); map keys
//! are written as it writes them (a number or a boolean as a string, others
//! refused). The unit tests hold the two to the same bytes on rmcp's
//! messages and on every kind of string.
//!
//! Not `sonic-rs`: in the server it measured no faster than this, adds ten
//! crates, and its escaper reads past the end of a string in release builds.

use serde::Serialize;
use serde::ser::{self, Error as _};

pub type Error = serde_json::Error;

/// Appends `value` as compact JSON, exactly as `serde_json::to_writer`.
pub fn to_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(Serializer { out })
}

/// Writes one value into `out`.
struct Serializer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Serializer<'a> {
    /// Writes a number, boolean or `null` as serde_json does.
    fn plain<T: Serialize>(self, value: T) -> Result<(), Error> {
        serde_json::to_writer(self.out, &value)
    }

    /// Starts a sequence or map; one without members is closed at once,
    /// as serde_json does (`[]`, `{}`).
    fn compound(self, open: u8, close: u8, len: Option<usize>, variant: bool) -> Compound<'a> {
        self.out.push(open);
        // serde_json's `State::Empty`: closed at once; a member written
        // anyway still gets a comma and reopens the closing bracket.
        let empty = len == Some(0);
        if empty {
            self.out.push(close);
        }
        Compound {
            out: self.out,
            first: !empty,
            closed: empty,
            close,
            variant,
        }
    }

    /// Writes `{"variant":`, the start of an enum variant with data.
    fn open_variant(self, variant: &str) -> Self {
        self.out.push(b'{');
        string(self.out, variant);
        self.out.push(b':');
        self
    }
}

/// A sequence, map or struct being written: commas between its members,
/// and its closing bracket (and the variant's `}`) at the end.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Its closing bracket is written: it was said to have no members, and
    /// none came.
    closed: bool,
    close: u8,
    /// Inside `{"variant":…}`.
    variant: bool,
}

impl Compound<'_> {
    fn comma(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.closed = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(Serializer { out: self.out })
    }

    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(MapKey { out: self.out })
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(Serializer { out: self.out })
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.comma();
        string(self.out, key);
        self.out.push(b':');
        self.value(value)
    }

    fn close(self) -> Result<(), Error> {
        if !self.closed {
            self.out.push(self.close);
        }
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for Serializer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.plain(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        string(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // An array of numbers, as serde_json writes bytes.
        self.plain(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let ser = self.open_variant(variant);
        value.serialize(Serializer { out: ser.out })?;
        ser.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.compound(b'[', b']', len, false))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self
            .open_variant(variant)
            .compound(b'[', b']', Some(len), true))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.compound(b'{', b'}', len, false))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self
            .open_variant(variant)
            .compound(b'{', b'}', Some(len), true))
    }
}

/// The four kinds of sequence: `[` members `]`.
macro_rules! sequences {
    ($($kind:ident :: $add:ident),*) => {$(
        impl ser::$kind for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}

sequences!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        // serde_json writes the colon here (`begin_object_value`).
        self.out.push(b':');
        self.value(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// Structs and struct variants: `{` fields `}`.
macro_rules! structs {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}

structs!(SerializeStruct, SerializeStructVariant);

/// A map key: a string, or a number or boolean written as a string (as
/// serde_json does). Anything else is refused.
struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

impl MapKey<'_> {
    fn quoted<T: Serialize>(self, number: T) -> Result<(), Error> {
        self.out.push(b'"');
        serde_json::to_writer(&mut *self.out, &number)?;
        self.out.push(b'"');
        Ok(())
    }

    fn quoted_float<T: Serialize>(self, finite: bool, number: T) -> Result<(), Error> {
        if !finite {
            return Err(refused_key(number));
        }
        self.quoted(number)
    }
}

fn key_must_be_a_string() -> Error {
    refused_key(())
}

/// serde_json's own error for a key it refuses: same message and category.
fn refused_key<K: Serialize>(key: K) -> Error {
    struct Entry<K>(K);
    impl<K: Serialize> Serialize for Entry<K> {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeMap as _;
            let mut map = s.serialize_map(Some(1))?;
            map.serialize_entry(&self.0, &())?;
            map.end()
        }
    }
    match serde_json::to_writer(std::io::sink(), &Entry(key)) {
        Err(error) => error,
        Ok(()) => Error::custom("key must be a string"),
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        string(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.quoted_float(v.is_finite(), v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.quoted_float(v.is_finite(), v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that JSON escapes (below 0x20, `"`,
/// `\`). Exact up to the first such byte: a borrow can only mark bytes above
/// it, and only the first is used.
fn escapes(word: u64) -> u64 {
    (word.wrapping_sub(ONES * 0x20)
        | (word ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES)
        | (word ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES))
        & !word
        & HIGH
}

/// Appends `text` as a JSON string, quotes included.
///
/// Sixteen bytes are copied ahead, then the write position moves to the
/// first byte to escape, if any, and its escape (eight bytes written, two or
/// six kept, at most 15 bytes in) overwrites what was copied past it. The
/// buffer is kept at least [`AHEAD`] bytes longer than what is written, and
/// cut to length at the end.
fn string(out: &mut Vec<u8>, text: &str) {
    /// Room kept past the write position: 16 bytes copied ahead, or an
    /// escape's 8 bytes 15 bytes in.
    const AHEAD: usize = 15 + 8;
    let bytes = text.as_bytes();
    let start = out.len();
    // The text, one escape in eight bytes, the quotes and the room ahead;
    // grown by half when escapes are denser.
    out.resize(start + bytes.len() + bytes.len() / 8 + 2 + AHEAD, 0);
    out[start] = b'"';
    let mut at = start + 1;
    let mut read = 0;
    loop {
        if out.len() < at + AHEAD {
            let grown = out.len() + out.len() / 2 + AHEAD;
            out.resize(grown, 0);
        }
        let Some(chunk) = bytes.get(read..read + 16) else {
            break;
        };
        let chunk: &[u8; 16] = chunk.try_into().expect("16 bytes");
        out[at..at + 16].copy_from_slice(chunk);
        let low = escapes(u64::from_le_bytes(chunk[..8].try_into().expect("8 bytes")));
        let high = escapes(u64::from_le_bytes(chunk[8..].try_into().expect("8 bytes")));
        if low | high == 0 {
            at += 16;
            read += 16;
            continue;
        }
        let first = if low != 0 {
            low.trailing_zeros() / 8
        } else {
            8 + high.trailing_zeros() / 8
        } as usize;
        at += first;
        read += first + 1;
        at += put(&mut out[at..], chunk[first]);
    }
    for &byte in &bytes[read..] {
        if out.len() < at + 8 {
            out.resize(at + 8, 0);
        }
        at += put(&mut out[at..], byte);
    }
    out.truncate(at);
    out.push(b'"');
}

/// Writes `byte` at the start of `to` (eight bytes of room) as it stands in
/// a JSON string, and returns how many bytes that is (1, 2 or 6).
#[inline(always)]
fn put(to: &mut [u8], byte: u8) -> usize {
    match ESCAPED.get(usize::from(byte)) {
        Some(&(escaped, len)) => {
            to[..8].copy_from_slice(&escaped);
            usize::from(len)
        }
        None => {
            to[0] = byte;
            1
        }
    }
}

/// How each byte up to `\` stands in a JSON string, padded to eight bytes,
/// and its length: looked up, not matched, so that writing an escape takes no
/// branch (a `SKILL.md` has one in about 35 bytes, mostly line breaks).
const ESCAPED: [([u8; 8], u8); 0x5d] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut table = [([0; 8], 1); 0x5d];
    let mut byte = 0;
    while byte < table.len() {
        let short = match byte as u8 {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0c => b'f',
            _ => 0,
        };
        table[byte] = if short != 0 {
            ([b'\\', short, 0, 0, 0, 0, 0, 0], 2)
        } else if byte < 0x20 {
            let (high, low) = (HEX[byte >> 4], HEX[byte & 15]);
            ([b'\\', b'u', b'0', b'0', high, low, 0, 0], 6)
        } else {
            ([byte as u8, 0, 0, 0, 0, 0, 0, 0], 1)
        };
        byte += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonRpcResponse, JsonRpcVersion2_0,
        RequestId, ServerJsonRpcMessage, ServerResult,
    };
    use serde_json::json;

    fn same<T: Serialize + ?Sized>(value: &T) {
        let expected = serde_json::to_vec(value).unwrap();
        let mut got = b"prefix".to_vec();
        to_writer(&mut got, value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got[6..]),
            String::from_utf8_lossy(&expected)
        );
    }

    #[test]
    fn every_string_is_escaped_as_serde_json_escapes_it() {
        let mut all = String::new();
        for code in (0..0x800).chain([0x2028, 0x2029, 0xfeff, 0x1f600]) {
            let c = char::from_u32(code).unwrap();
            all.extend([c, 'a', c, c]);
        }
        let texts = [
            all.as_str(),
            "",
            "\"",
            "\\",
            "plain text longer than sixteen bytes, with no escape at all",
            "---\nname: pdf\ndescription: \"Fill forms\"\n---\n\n# PDF\n\tC:\\path\r\n",
        ];
        for text in texts {
            // Every alignment of every escape against the 16-byte steps.
            for cut in 0..text.len().min(40) {
                if text.is_char_boundary(cut) {
                    same(&text[cut..]);
                }
                if text.is_char_boundary(text.len() - cut) {
                    same(&text[..text.len() - cut]);
                }
            }
        }
        for byte in 0..0x80u8 {
            for len in 0..40 {
                let mut text = "x".repeat(len);
                text.push(char::from(byte));
                text.push_str("yz");
                same(&text);
                same(&text.repeat(9));
            }
        }
    }

    #[test]
    fn messages_are_written_as_serde_json_writes_them() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        let answer = ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(7),
            result: ServerResult::CallToolResult(CallToolResult::success(vec![
                ContentBlock::text(text),
                ContentBlock::text("Files in this skill:\n- a.md (1.0 KB)"),
                ContentBlock::image("aGVsbG8=", "image/png"),
            ])),
        });
        same(&answer);
        let error = ServerJsonRpcMessage::error(
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "no \"name\"",
                Some(json!({"a": 1})),
            ),
            Some(RequestId::String("x\ny".into())),
        );
        same(&error);
        same(&json!({
            "numbers": [0, -1, u64::MAX, i64::MIN, 0.1, 1e300, -0.0, 2.5e-8],
            "nested": {"": [], "e": {}, "t": true, "f": false, "n": null, "s": "é\u{1}"},
            "unicode key \u{7f}\"": [[[]], [{}]],
        }));
        same(&(1u8, 'c', [1u8, 2], Some(3), None::<u8>, ()));
        same(&std::collections::BTreeMap::from([
            (3i32, "three"),
            (-1, "minus one"),
        ]));
    }

    #[test]
    fn enum_variants_are_written_as_serde_json_writes_them() {
        #[derive(Serialize)]
        enum Shape {
            Unit,
            Newtype(u8),
            Tuple(u8, &'static str),
            Struct { a: u8, b: Vec<u8> },
            EmptyTuple(),
            EmptyStruct {},
        }
        same(&[
            Shape::Unit,
            Shape::Newtype(1),
            Shape::Tuple(2, "t"),
            Shape::Struct { a: 3, b: vec![] },
            Shape::EmptyTuple(),
            Shape::EmptyStruct {},
        ]);
    }

    #[test]
    fn members_past_a_length_of_zero_are_written_as_serde_json_writes_them() {
        // A `Serialize` impl can say a length and break it: an iterator with
        // a wrong size hint in `collect_seq`, a stateful
        // `skip_serializing_if`. Invalid JSON either way, but the same bytes.
        fn seq<S: ser::Serializer>(s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeSeq as _;
            let mut seq = s.serialize_seq(Some(0))?;
            seq.serialize_element(&1)?;
            seq.serialize_element(&2)?;
            seq.end()
        }
        fn map<S: ser::Serializer>(s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeMap as _;
            let mut map = s.serialize_map(Some(0))?;
            map.serialize_entry("a", &1)?;
            map.end()
        }
        fn tuple_variant<S: ser::Serializer>(s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeTupleVariant as _;
            let mut variant = s.serialize_tuple_variant("E", 0, "V", 0)?;
            variant.serialize_field(&1)?;
            variant.end()
        }
        fn struct_variant<S: ser::Serializer>(s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeStructVariant as _;
            let mut variant = s.serialize_struct_variant("E", 0, "V", 0)?;
            variant.serialize_field("a", &1)?;
            variant.end()
        }
        fn keys_then_value<S: ser::Serializer>(s: S) -> Result<S::Ok, S::Error> {
            use ser::SerializeMap as _;
            let mut map = s.serialize_map(None)?;
            map.serialize_key("a")?;
            map.serialize_key("b")?;
            map.serialize_value(&1)?;
            map.end()
        }
        macro_rules! by {
            ($($f:ident),*) => {$({
                struct Impl;
                impl Serialize for Impl {
                    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        $f(s)
                    }
                }
                same(&Impl);
            })*};
        }
        by!(seq, map, tuple_variant, struct_variant, keys_then_value);
    }

    #[test]
    fn map_keys_are_written_as_serde_json_writes_them() {
        for key in [f64::NAN, f64::INFINITY] {
            let map = std::collections::HashMap::from([(key.to_bits(), 1)]);
            same(&map);
            struct Float(f64);
            impl Serialize for Float {
                fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    use ser::SerializeMap as _;
                    let mut map = s.serialize_map(Some(1))?;
                    map.serialize_entry(&self.0, &1)?;
                    map.end()
                }
            }
            let ours = to_writer(&mut Vec::new(), &Float(key)).unwrap_err();
            let theirs = serde_json::to_vec(&Float(key)).unwrap_err();
            assert_eq!(ours.to_string(), theirs.to_string());
            assert_eq!(ours.classify(), theirs.classify());
        }
        same(&std::collections::BTreeMap::from([(true, 1), (false, 2)]));
        same(&std::collections::BTreeMap::from([(Some('k'), 1)]));
        same(&std::collections::HashMap::from([(1.5f64.to_bits(), 1)]));
        let map = std::collections::BTreeMap::from([((1, 2), "pair")]);
        assert!(serde_json::to_vec(&map).is_err());
        assert_eq!(
            to_writer(&mut Vec::new(), &map).unwrap_err().to_string(),
            "key must be a string"
        );
    }
}
