mod escapes;
mod provisioning_faults;
