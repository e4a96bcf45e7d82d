mod auth;
mod events;
mod health;
mod journey;
mod kit;
mod matrix;
