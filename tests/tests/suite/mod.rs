mod provisioning_faults;
