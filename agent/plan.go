package agent

// Planner is a tool that keeps the model's plan for each session (the
// `todo` of agent/tools): the loop reminds the model of a plan that has
// open items and was not updated for a while.
type Planner interface {
	Tool
	// Open reports whether the session's plan has items not done.
	Open(sessionID int64) bool
}

// todoReminder follows the last tool result of a step when the plan has
// open items and was not updated for a while. It sits in a tool result,
// labelled as opsbot's, so that the model cannot take it for the person.
const todoReminder = "\n\n[opsbot reminder, not part of the output above] Your todo list has open items and was not updated for a few steps: update it with the todo tool as you go."

// remind appends the todo reminder to a step's results when the model
// keeps a plan, has open items, and has not touched it for RemindAfter
// steps. A model that never used the todo tool is never reminded.
func (a *Agent) remind(t *turn, results *Message) {
	plan, ok := a.Tools.planner()
	if !ok || t.sinceTodo < a.remindAfter() || len(results.Content) == 0 || !plan.Open(t.sess.ID) {
		return
	}
	last := &results.Content[len(results.Content)-1]
	last.Content += todoReminder
	t.sinceTodo = 0
}

// planner is the registry's Planner, if it has one.
func (r *Registry) planner() (Planner, bool) {
	for _, t := range r.tools {
		if p, ok := t.(Planner); ok {
			return p, true
		}
	}
	return nil, false
}

// plans reports whether the tool named name is the Planner: calling it
// is updating the plan.
func (r *Registry) plans(name string) bool {
	_, ok := r.tools[name].(Planner)
	return ok
}
