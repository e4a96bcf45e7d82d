mod channels;
mod computer;
mod kit;
mod turns;
