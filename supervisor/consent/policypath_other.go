//go:build !darwin

package consent

// SystemPolicyPath is the managed policy file on Linux and other Unix
// systems.
const SystemPolicyPath = "/etc/deskhand/policy.json"
