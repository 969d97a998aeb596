package consent

// SystemPolicyPath is the managed policy file on macOS.
const SystemPolicyPath = "/Library/Application Support/deskhand/policy.json"
