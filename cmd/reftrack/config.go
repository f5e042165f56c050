package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// credentials are what `reftrack login` and `reftrack init` keep for the next commands, in the user's
// config directory, readable by the user only (0600).
type credentials struct {
	Server       string    `json:"server"`
	Token        string    `json:"token,omitempty"`
	Email        string    `json:"email,omitempty"`
	AdvertiserID int64     `json:"advertiser_id,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	// Program is the current program; Keys holds the API keys init and keys regenerate showed, by
	// program id.
	Program string            `json:"program,omitempty"`
	Keys    map[string]string `json:"keys,omitempty"`
}

// keep stores key as program's API key.
func (c *credentials) keep(program, key string) {
	if c.Keys == nil {
		c.Keys = map[string]string{}
	}
	c.Keys[program] = key
}

// store is the credentials file.
type store struct{ dir string }

func (s store) path() string { return filepath.Join(s.dir, "credentials.json") }

func (s store) load() (credentials, error) {
	var c credentials
	b, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

func (s store) save(c credentials) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path())
}

func (s store) remove() error {
	err := os.Remove(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// defaultConfigDir is $REFTRACK_CONFIG_DIR, else the user's config directory.
func defaultConfigDir() string {
	if d := os.Getenv("REFTRACK_CONFIG_DIR"); d != "" {
		return d
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return ".reftrack"
	}
	return filepath.Join(d, "reftrack")
}
