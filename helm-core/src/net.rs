//! Connections Helm opens to other servers (computer servers, the other
//! nodes of a shared store): HTTP clients and WebSockets with Helm's TLS
//! (rustls with the `ring` provider and the OS certificate store), so that
//! a frontend that passes requests on needs no TLS setup of its own.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite;

use crate::error::Result;

/// A WebSocket to another server, plain or over TLS.
pub type WebSocket = tokio_tungstenite::WebSocketStream<Box<dyn Stream>>;

/// A connection a [`WebSocket`] runs over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// An HTTP/1.1 client with Helm's TLS, giving up on a connection after
/// `connect_timeout`.
pub fn http_client(connect_timeout: Duration) -> Result<reqwest::Client> {
    crate::provider::http::build_http_client(connect_timeout)
}

/// Opens the WebSocket `request` asks for (`ws://` or `wss://`, with its
/// headers). A server that answers without switching protocols gives
/// [`tungstenite::Error::Http`] with its answer, so a caller can pass it on.
pub async fn connect_websocket(
    request: tungstenite::handshake::client::Request,
) -> std::result::Result<WebSocket, tungstenite::Error> {
    let uri = request.uri().clone();
    let host = uri.host().unwrap_or_default().to_string();
    let secure = uri.scheme_str() == Some("wss");
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
    let stream: Box<dyn Stream> = if secure {
        let config = crate::provider::http::tls_config().map_err(std::io::Error::other)?;
        let name = rustls::pki_types::ServerName::try_from(host).map_err(std::io::Error::other)?;
        Box::new(
            tokio_rustls::TlsConnector::from(Arc::new(config))
                .connect(name, tcp)
                .await?,
        )
    } else {
        Box::new(tcp)
    };
    let (socket, _) = tokio_tungstenite::client_async(request, stream).await?;
    Ok(socket)
}
