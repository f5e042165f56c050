package accounts

// RoleError refuses an action that the member's role does not allow.
type RoleError struct{ Role, Action string }

func (e *RoleError) Error() string { return "role " + e.Role + " does not allow " + e.Action }

// Authorize is nil when role allows action, else a *RoleError.
func Authorize(role, action string) error {
	if !Can(role, action) {
		return &RoleError{Role: role, Action: action}
	}
	return nil
}
