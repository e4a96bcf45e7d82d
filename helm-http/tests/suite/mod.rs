mod auth;
mod bad_input;
mod events;
mod health;
mod journey;
mod kit;
mod matrix;
mod openapi;
