package policy

import (
	"fmt"
	"strings"
)

// wgetSpec reads wget's options only to find its URLs and the ones that
// read URLs or commands from elsewhere.
var wgetSpec = optSpec{lenient: true, short: "e:i:o:O:a:P:t:T:w:U:Q:B:"}

// wgetDests: wget's URL operands; -i reads more URLs from a file or its
// input, -e and --config run wgetrc commands (a proxy among them).
func wgetDests(args []arg) ([]dest, string) {
	p := wgetSpec.parse(args)
	if o := p.find("i", "input-file", "e", "execute", "config", "B", "base", "input-metalink"); o != nil {
		return nil, fmt.Sprintf("wget %s reads URLs or settings the policy cannot see", o)
	}
	return urlDests(wgetSpec)(args)
}

// flagFetchers find where a program that is not a network client fetches
// from the network because an option or operand says so; any such fetch
// needs a person.
var flagFetchers = map[string]func(args []arg) string{"rpm": rpmFetches, "lspci": lspciFetches, "openssl": opensslFetches}

// opensslFetches: OpenSSL's apps load a certificate, key or CRL named by
// an http:// URI over the network (openssl x509 -in http://…, verify
// -CAfile http://…); s_client's destinations are judged by opensslDests.
func opensslFetches(args []arg) string {
	for _, a := range args {
		if strings.Contains(a.val, "://") {
			return fmt.Sprintf("openssl %s may fetch it over the network", a.show())
		}
	}
	return ""
}

// rpmFetches: rpm downloads a package named by URL (rpm -qp URL, rpm
// -qip URL) over http or ftp.
func rpmFetches(args []arg) string {
	for _, a := range args {
		if strings.Contains(a.val, "://") || !a.static() {
			return fmt.Sprintf("rpm %s may fetch a package over the network", a.show())
		}
	}
	return ""
}

// lspciSpec is pciutils' lspci options (lspci.c and its generic ones).
var lspciSpec = optSpec{lenient: true, short: "nvbxs:d:tPi:mgp:qkMDQA:GO:H:F:J"}

// lspciFetches: -q and -Q ask a DNS server about unknown devices; -O
// sets access parameters, net.domain and net.cache-name among them; -A
// and -H read the hardware directly; -F, -i and -p read the files they
// name.
func lspciFetches(args []arg) string {
	p := lspciSpec.parse(args)
	if o := p.find("q", "Q", "O", "A", "H", "F", "i", "p"); o != nil {
		return fmt.Sprintf("lspci %s queries the network, reads the hardware directly or reads a file it names", o)
	}
	return ""
}
