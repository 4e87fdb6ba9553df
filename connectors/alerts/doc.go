// Package alerts is alert intake: the sources that POST alerts to
// /hooks/{name} (Alertmanager webhook v4, Grafana, PagerDuty v3 webhooks, a
// generic JSON shape), how each is authenticated, how its payload reads as
// a neutral Delivery, and the routes that say which channel an alert group
// goes to. It records each delivery through a Recorder before it answers
// 202 and acts on nothing itself: the bot reads what was recorded (one
// thread per alert group, the investigation).
package alerts
