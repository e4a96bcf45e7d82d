mod channels;
mod kit;
