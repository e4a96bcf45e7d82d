mod escapes;
mod journey;
mod memory;
mod provider_kit;
mod providers_anthropic;
mod providers_openai;
mod provisioning_faults;
mod turns;
