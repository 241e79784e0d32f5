//go:build !linux && !darwin

package instance

import "errors"

// processStart is not known here: ForParent falls back to a random id.
func processStart(int) (start, boot string, err error) {
	return "", "", errors.New("no process start time on this system")
}
