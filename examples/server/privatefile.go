package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// readPrivateFile reads a file holding a secret, refusing one that its
// group or others may read. This is the one mode rule of every secret file
// the server reads: the operator token, the secret key, the TLS key, the
// SMS upstream's credentials and callback secret.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if mode := st.Mode().Perm(); mode&0o077 != 0 {
		return nil, fmt.Errorf("%s holds a secret but its mode is %04o, readable by others: chmod 600 %s", path, mode, path)
	}
	return io.ReadAll(f)
}

// secretFile is a secret file the server reads at start, or creates with
// a fresh secret when it is missing. Opening it (openSecretFile) writes
// nothing, so that a start refused for any reason leaves the directory as
// it was; create writes it once every check has passed.
type secretFile struct {
	// flag names the file in errors, e.g. "-secret-key-file".
	flag string
	path string
	// body is what the file holds, or will hold once created.
	body []byte
	// missing is true until create has written a missing file.
	missing bool
	// check refuses a body that is not a valid secret; it must not quote
	// the body.
	check func(body []byte) error
}

// openSecretFile reads path under readPrivateFile's mode rule and checks
// its body, or, when path does not exist, takes a body from fresh for
// create to write. It writes nothing.
func openSecretFile(flag, path string, fresh func() ([]byte, error), check func([]byte) error) (*secretFile, error) {
	pf := &secretFile{flag: flag, path: path, check: check}
	if err := pf.read(); err == nil {
		return pf, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	body, err := fresh()
	if err != nil {
		return nil, err
	}
	pf.body, pf.missing = body, true
	return pf, nil
}

// read takes the body of the existing file.
func (pf *secretFile) read() error {
	b, err := readPrivateFile(pf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pf.flag, err)
	}
	if err := pf.check(b); err != nil {
		return fmt.Errorf("%s: %s %w", pf.flag, pf.path, err)
	}
	pf.body = b
	return nil
}

// create writes a missing file (mode 0600) and reports whether it did.
// It never overwrites: when another process created the file meanwhile,
// the body becomes that file's.
func (pf *secretFile) create() (created bool, err error) {
	if !pf.missing {
		return false, nil
	}
	f, err := os.OpenFile(pf.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		pf.missing = false
		return false, pf.read()
	}
	if err != nil {
		return false, fmt.Errorf("%s: creating %s: %w", pf.flag, pf.path, err)
	}
	_, werr := f.Write(pf.body)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(pf.path)
		return false, fmt.Errorf("%s: creating %s: %w", pf.flag, pf.path, werr)
	}
	pf.missing = false
	return true, nil
}
