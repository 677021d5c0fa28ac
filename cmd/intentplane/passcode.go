package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/intentplane/intentplane/approvals/passcode"
)

// hashPasscodeCmd prints the scrypt hash of an approver's passcode for the
// approval page's configuration.
type hashPasscodeCmd struct {
	LogN uint8 `name:"log-n" default:"15" help:"scrypt cost: log2 of N (14 to 20; 15 takes about 0.1 s)."`
}

// Run reads the passcode from the terminal without echo (twice, to
// confirm), or from the first line of stdin when stdin is not a terminal,
// and prints its hash.
func (c *hashPasscodeCmd) Run(e *env) error {
	pass, err := readPasscode(os.Stdin, e.stderr)
	if err != nil {
		return err
	}
	if c.LogN < 14 || c.LogN > 20 {
		return fmt.Errorf("--log-n %d: use 14 to 20; a lower cost makes passcodes cheap to guess from a stolen configuration", c.LogN)
	}
	h, err := passcode.Hash(pass, passcode.Params{LogN: c.LogN}, nil)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, h)
	return err
}

// readPasscode reads a passcode from in: without echo, asked twice, when in
// is a terminal; otherwise its first line, without the line ending.
func readPasscode(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, "Passcode: ")
		p1, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", err
		}
		fmt.Fprint(prompt, "Again: ")
		p2, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", err
		}
		if string(p1) != string(p2) {
			return "", errors.New("hash-passcode: the two passcodes differ")
		}
		return string(p1), nil
	}
	line, err := bufio.NewReader(io.LimitReader(in, passcode.MaxLen+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("hash-passcode: no passcode on stdin")
	}
	return line, nil
}
