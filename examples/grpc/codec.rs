//! A tonic codec whose message is a UTF-8 string, so that the gRPC example and
//! the `tonic_*` tests need neither protoc nor prost. Included by both with
//! `#[path]`.

use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// A message is its UTF-8 bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Utf8Codec;

impl Codec for Utf8Codec {
    type Encode = String;
    type Decode = String;
    type Encoder = Utf8Codec;
    type Decoder = Utf8Codec;

    fn encoder(&mut self) -> Self::Encoder {
        Utf8Codec
    }

    fn decoder(&mut self) -> Self::Decoder {
        Utf8Codec
    }
}

impl Encoder for Utf8Codec {
    type Item = String;
    type Error = Status;

    fn encode(&mut self, item: String, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(item.as_bytes());
        Ok(())
    }
}

impl Decoder for Utf8Codec {
    type Item = String;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<String>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|_| Status::internal("not UTF-8"))
    }
}
