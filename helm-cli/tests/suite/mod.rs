mod channels;
mod computer;
mod kit;
