//! Perfetto's self-describing generic events (`denser_generic_event_encoding`, the recorder's
//! default since v53): an ftrace event its protos have no message for (sched_stat_runtime is
//! one) is written as a message of its own at a field number of `FtraceEvent` past 65535, and
//! a bundle's `generic_event_descriptors` give, once per field number, that message's
//! `DescriptorProto`: the event's name and its fields' names, numbers and types.
//!
//! prost drops the fields a message type does not declare, so such an event decodes as an
//! `FtraceEvent` with no event at all. [`Described::event`] reads it from the event's own bytes
//! instead (walked with prost's wire-format functions) into the `GenericFtraceEvent` the older
//! encoding gives, so both encodings reach the same code.
//!
//! As Perfetto's trace processor does, the first descriptor of a field number holds for the
//! whole trace.

use std::collections::HashMap;

use prost::Message;
use prost::bytes::Buf;
use prost::encoding::{
    DecodeContext, WireType, decode_key, decode_varint, int64, sint64, skip_field,
};
use schedlab_perfetto_protos::field_descriptor_proto::Type;
use schedlab_perfetto_protos::ftrace_event_bundle::GenericEventDescriptor;
use schedlab_perfetto_protos::generic_ftrace_event::{Field, field::Value};
use schedlab_perfetto_protos::{DescriptorProto, GenericFtraceEvent};

/// The lowest field number of `FtraceEvent` a generic event is given.
const FIRST_GENERIC_FIELD: u32 = 1 << 16;

/// `TracePacket.ftrace_events`.
const PACKET_FTRACE_EVENTS: u32 = 1;
/// `FtraceEventBundle.event`.
const BUNDLE_EVENT: u32 = 2;

/// One generic event's message: its name, and its fields by number.
#[derive(Debug)]
struct EventLayout {
    name: String,
    fields: HashMap<u32, (String, Type)>,
}

/// The trace's generic event descriptors, by field number.
#[derive(Debug, Default)]
pub(crate) struct Described {
    by_field: HashMap<u32, EventLayout>,
}

impl Described {
    /// Takes a bundle's descriptors; one of a field number already described, or that does
    /// not decode, is left out.
    pub fn add(&mut self, descriptors: &[GenericEventDescriptor]) {
        for d in descriptors {
            let Some(field) = d.field_id.and_then(|f| u32::try_from(f).ok()) else {
                continue;
            };
            if self.by_field.contains_key(&field) {
                continue;
            }
            let Ok(message) = DescriptorProto::decode(d.event_descriptor()) else {
                continue;
            };
            let fields = (message.field.iter())
                .filter_map(|f| {
                    Some((
                        u32::try_from(f.number?).ok()?,
                        (f.name.clone()?, f.r#type()),
                    ))
                })
                .collect();
            self.by_field.insert(
                field,
                EventLayout {
                    name: message.name().to_owned(),
                    fields,
                },
            );
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_field.is_empty()
    }

    /// The generic event in `event` (one `FtraceEvent`'s bytes), if it holds one described.
    pub fn event(&self, mut event: &[u8]) -> Option<GenericFtraceEvent> {
        while event.has_remaining() {
            let (tag, wire) = decode_key(&mut event).ok()?;
            match self.by_field.get(&tag) {
                Some(message)
                    if tag >= FIRST_GENERIC_FIELD && wire == WireType::LengthDelimited =>
                {
                    return message.read(delimited(&mut event)?);
                }
                _ => skip_field(wire, tag, &mut event, DecodeContext::default()).ok()?,
            }
        }
        None
    }
}

impl EventLayout {
    /// The message's fields as a `GenericFtraceEvent`'s, by their names; a field the
    /// descriptor does not name is left out.
    fn read(&self, mut bytes: &[u8]) -> Option<GenericFtraceEvent> {
        let mut field = Vec::new();
        while bytes.has_remaining() {
            let (tag, wire) = decode_key(&mut bytes).ok()?;
            let Some((name, kind)) = self.fields.get(&tag) else {
                skip_field(wire, tag, &mut bytes, DecodeContext::default()).ok()?;
                continue;
            };
            let value = match (wire, kind) {
                (WireType::LengthDelimited, _) => {
                    let text = delimited(&mut bytes)?;
                    // ftrace's char arrays keep the NULs after the text.
                    let text = text.split(|&b| b == 0).next().unwrap_or_default();
                    Value::StrValue(String::from_utf8_lossy(text).into_owned())
                }
                (WireType::Varint, Type::Uint64 | Type::Uint32 | Type::Bool) => {
                    Value::UintValue(decode_varint(&mut bytes).ok()?)
                }
                (WireType::Varint, Type::Sint64 | Type::Sint32) => {
                    let mut v = 0;
                    sint64::merge(wire, &mut v, &mut bytes, DecodeContext::default()).ok()?;
                    Value::IntValue(v)
                }
                // int32 and int64 carry negative values sign-extended to 64 bits.
                (WireType::Varint, _) => {
                    let mut v = 0;
                    int64::merge(wire, &mut v, &mut bytes, DecodeContext::default()).ok()?;
                    Value::IntValue(v)
                }
                _ => {
                    skip_field(wire, tag, &mut bytes, DecodeContext::default()).ok()?;
                    continue;
                }
            };
            field.push(Field {
                name: Some(name.clone()),
                value: Some(value),
            });
        }
        Some(GenericFtraceEvent {
            event_name: Some(self.name.clone()),
            field,
        })
    }
}

/// A length-delimited field's bytes, `buf` moved past them.
fn delimited<'a>(buf: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = prost::decode_length_delimiter(&mut *buf).ok()?;
    let bytes = buf.get(..len)?;
    buf.advance(len);
    Some(bytes)
}

/// The bytes of each event of the bundle in `packet` (a `TracePacket`'s bytes), in the order
/// the decoded bundle has them.
pub(crate) fn bundle_events(mut packet: &[u8]) -> Vec<&[u8]> {
    let mut events = Vec::new();
    let mut bundles = Vec::new();
    each_field(&mut packet, PACKET_FTRACE_EVENTS, &mut bundles);
    for mut bundle in bundles {
        each_field(&mut bundle, BUNDLE_EVENT, &mut events);
    }
    events
}

/// Every length-delimited field `number` of the message in `buf`, into `out`.
fn each_field<'a>(buf: &mut &'a [u8], number: u32, out: &mut Vec<&'a [u8]>) {
    while buf.has_remaining() {
        let Ok((tag, wire)) = decode_key(buf) else {
            return;
        };
        if tag == number && wire == WireType::LengthDelimited {
            match delimited(buf) {
                Some(bytes) => out.push(bytes),
                None => return,
            }
        } else if skip_field(wire, tag, buf, DecodeContext::default()).is_err() {
            return;
        }
    }
}
