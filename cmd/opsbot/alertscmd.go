package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/connectors/alerts"
)

func newAlertsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "alerts",
		Short:   "Alert sources (alerts: in the config): send a test alert",
		Example: "  opsbot alerts test am alert.json --config /etc/opsbot/opsbot.yaml",
	}
	test := &cobra.Command{
		Use:   "test SOURCE FILE",
		Short: "Post a saved alert payload to a running bot, as the source's sender would",
		Long: `Post FILE to POST /hooks/SOURCE of a running opsbot, authenticated as the source's
sender is: Authorization: Bearer with its token (alertmanager, grafana, generic), or
X-PagerDuty-Signature made with its first secret (pagerduty). The bot answers 202
once it recorded the delivery; the alert's thread then opens in the channel of the
first route that matches. The bot is reached at --url, else at web.listen (or
--listen, OPSBOT_LISTEN) of the config.`,
		Example: "  opsbot alerts test am testdata/am_firing.json --config opsbot.yaml\n" +
			"  opsbot alerts test pd incident.json --config opsbot.yaml --url https://opsbot.example.com",
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) != 2 {
				return usageError(errors.New("alerts test needs a SOURCE (a name in alerts.sources) and a FILE holding a payload, e.g. opsbot alerts test am alert.json"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			if err := cfg.applyPlaceFlags(cmd, os.Getenv); err != nil {
				return err
			}
			url, _ := cmd.Flags().GetString("url")
			return sendTestAlert(cmd.OutOrStdout(), cfg, a[0], a[1], url)
		},
	}
	test.Flags().String("url", "", "the bot's base URL (default: http:// and the config's listener)")
	test.Flags().String("listen", "", "the bot's listener, host:port, when --url is not given (default $OPSBOT_LISTEN, else web.listen)")
	c.AddCommand(test)
	return c
}

// sendTestAlert posts file to the source's endpoint and says what the
// bot answered.
func sendTestAlert(out io.Writer, cfg *Config, name, file, base string) error {
	src, ok := cfg.Alerts.Source(name)
	if !ok {
		where := cfg.file
		if where == "" {
			where = "the embedded default config (give yours with --config)"
		}
		return usageError(fmt.Errorf("no alert source is named %q in %s: the sources are %s", name, where, sourceNames(cfg.Alerts)))
	}
	body, err := os.ReadFile(file)
	if err != nil {
		return usageError(fmt.Errorf("cannot read %s: %w", file, errors.Unwrap(err)))
	}
	if base == "" {
		base = "http://" + cfg.Web.Listen
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(base, "/")+"/hooks/"+name, bytes.NewReader(body))
	if err != nil {
		return usageError(fmt.Errorf("--url %s: not a URL", base))
	}
	signTestAlert(req, src, body)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("no answer from %s: is opsbot running there? (%v)", base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	var answer map[string]string
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%s answered %s: %s", base, resp.Status, answer["error"])
	}
	fmt.Fprintf(out, "%s recorded the alert (202); its thread opens in the channel of the first route that matches\n", base)
	return nil
}

// signTestAlert authenticates req as the source's sender does.
func signTestAlert(req *http.Request, src alerts.Source, body []byte) {
	req.Header.Set("Content-Type", "application/json")
	if src.Type != alerts.TypePagerDuty {
		req.Header.Set("Authorization", "Bearer "+src.Token)
		return
	}
	for _, s := range src.Secrets {
		if s != "" {
			req.Header.Set("X-PagerDuty-Signature", alerts.Sign(s, body))
			break
		}
	}
	req.Header.Set("X-Webhook-Id", fmt.Sprintf("opsbot-alerts-test-%d", time.Now().UnixNano()))
}

func sourceNames(c alerts.Config) string {
	if len(c.Sources) == 0 {
		return "none (add alerts.sources)"
	}
	var names []string
	for _, s := range c.Sources {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
