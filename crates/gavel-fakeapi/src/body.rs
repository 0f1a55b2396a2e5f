//! The fake's response bodies for hyper: a complete body (hyper sends it with
//! `content-length`), or a stream fed from a channel (sent with chunked transfer encoding, each
//! event flushed as it comes). A stream that ends with an error is how a fault cuts the
//! connection: hyper then closes it without the terminating chunk, so the client sees a
//! transport error mid-message, as it would with the real services.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;

/// One piece of a streamed body: data, or the error that cuts the connection.
pub type Chunk = Result<Bytes, io::Error>;

/// A response body.
#[derive(Debug)]
pub enum Body {
    /// Everything at once (`None` once sent).
    Full(Option<Bytes>),
    /// Whatever the producer sends, until it drops its sender (a proper end) or sends an error
    /// (a cut).
    Stream(mpsc::Receiver<Chunk>),
}

impl Body {
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self::Full(Some(bytes.into()))
    }

    /// A streamed body and the sender that feeds it.
    pub fn channel() -> (mpsc::Sender<Chunk>, Self) {
        let (tx, rx) = mpsc::channel(16);
        (tx, Self::Stream(rx))
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            Self::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Self::Stream(rx) => rx
                .poll_recv(cx)
                .map(|chunk| chunk.map(|c| c.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            // An exact size makes hyper send `content-length`.
            Self::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Self::Stream(_) => SizeHint::default(),
        }
    }
}
