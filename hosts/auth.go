package hosts

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// loadSigners reads the identity files. Key material never appears in an
// error: only the file name and what to do.
func loadSigners(files []string) ([]ssh.Signer, error) {
	var signers []ssh.Signer
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ssh.identity_files: %w", err)
		}
		s, err := ssh.ParsePrivateKey(pem)
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &missing):
			return nil, fmt.Errorf("ssh.identity_files: %s is protected by a passphrase: load it into an ssh-agent and set SSH_AUTH_SOCK instead", f)
		case err != nil:
			return nil, fmt.Errorf("ssh.identity_files: %s is not a private key opsbot can read (OpenSSH, PKCS#1/#8 PEM)", f)
		}
		signers = append(signers, s)
	}
	return signers, nil
}

// publicKeys is the one "publickey" auth method: the identity files, then
// the agent's keys. It must be a single method because x/crypto/ssh tries
// each method name once. The agent connection, if any, is returned for the
// caller to close once the handshake is over; it is never forwarded.
func publicKeys(signers []ssh.Signer, agentSock string) (ssh.AuthMethod, func()) {
	var ag agent.ExtendedAgent
	closeAgent := func() {}
	if agentSock != "" {
		if c, err := net.Dial("unix", agentSock); err == nil {
			ag, closeAgent = agent.NewClient(c), func() { c.Close() }
		}
	}
	method := ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		all := append([]ssh.Signer(nil), signers...)
		if ag != nil {
			if more, err := ag.Signers(); err == nil {
				all = append(all, more...)
			}
		}
		return all, nil
	})
	return method, closeAgent
}
