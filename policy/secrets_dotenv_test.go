package policy

import "testing"

// TestDotenvAndPEMAreSecrets: .env, .env.* and *.pem files are
// credentials in any directory (the classifier matches names in their
// case, as it does id_rsa; the sandbox masks them in any case), but jq's filter is code,
// not a path: the field .env is no file, while a file jq reads still is.
func TestDotenvAndPEMAreSecrets(t *testing.T) {
	t.Parallel()
	expectOn(t, defaultPolicy(t), bothHosts, []verdictCase{
		{"cat /srv/app/.env", Approve},
		{"cat .env", Approve},
		{"head /srv/app/.env.production", Approve},
		{"grep DB_ /opt/app/.env.local", Approve},
		{"cat /etc/nginx/tls/site.pem", Approve},
		{"openssl rsa -in /srv/app/key.pem -noout", Approve},
		{"jq . /srv/app/.env.json", Approve},
		{"jq --rawfile e /srv/app/.env . /tmp/x.json", Approve},
		{"jq . /tmp/x.json .env", Approve},
		{"jq -- .env .env", Approve},
		// a filter, not a path
		{"jq .env /tmp/x.json", Allow},
		{"jq '.env.PATH' /tmp/x.json", Allow},
		{"jq -r '.env' /tmp/x.json", Allow},
		{"jq --arg k v '.env[$k]' /tmp/x.json", Allow},
		{"jq -- '.env.pem' /tmp/x.json", Allow},
		{"cat /srv/app/env.example /srv/app/cert.crt", Allow},
	})
}
