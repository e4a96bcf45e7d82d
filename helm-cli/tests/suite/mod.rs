mod channels;
mod kit;
mod server;
mod turns;
