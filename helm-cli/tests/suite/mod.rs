mod channels;
mod kit;
mod turns;
