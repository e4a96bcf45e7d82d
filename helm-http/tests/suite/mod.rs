mod auth;
mod health;
mod journey;
mod kit;
mod matrix;
