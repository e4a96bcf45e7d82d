mod provisioning_faults;
mod turns;
