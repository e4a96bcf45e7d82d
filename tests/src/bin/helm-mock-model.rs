//! A mock OpenAI-compatible model server for the client tests in
//! `tests/clients` (run as a process by `scripts/client-tests`): every chat
//! request gets the same streamed answer. Prints its base URL, then serves
//! until killed.

use std::io::Write;

use helm_tests::mock::{Behaviour, MockOpenAi};

/// What the model always answers, in chunks (so streaming shows).
pub const ANSWER: [&str; 4] = ["The launch ", "plan: beta in May, ", "GA in June.", ""];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    mock.set_fallback(Behaviour::text_chunks(&ANSWER[..3]));
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", mock.base_url())?;
    out.flush()?;
    drop(out);
    std::future::pending::<()>().await;
    Ok(())
}
