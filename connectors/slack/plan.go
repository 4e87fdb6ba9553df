package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/opsbot/opsbot/connectors"
)

// Plans: a plan that runs shows as one plan block (a title and a task
// card per step), edited in place by chat.update as its steps go from
// pending to in_progress to complete or error. The message holds the
// plan block alone: Slack does not mix a plan block with task cards.

// maxPlanSteps is the most task cards Slack takes in one plan block.
const maxPlanSteps = 50

// EditPlan shows the message ref as a plan block: title, then one card
// per step (each step's ID unique). Its text (the notification's
// fallback) is the title.
func (c *Connector) EditPlan(ctx context.Context, ref connectors.Ref, title string, steps []connectors.Task) error {
	if len(steps) > maxPlanSteps {
		return fmt.Errorf("slack: a plan block holds at most %d steps, not %d", maxPlanSteps, len(steps))
	}
	block := planBlock(title, steps)
	return c.call(ctx, "chat.update", ref.Channel, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, ref.Channel, ref.ID, slack.MsgOptionText(truncate(title, maxTaskText), false), slack.MsgOptionBlocks(block))
		return err
	})
}

// planBlock is Slack's plan block of title and steps.
func planBlock(title string, steps []connectors.Task) *slack.PlanBlock {
	b := slack.NewPlanBlock(truncate(title, maxTaskText), slack.PlanBlockOptionBlockID("opsbot_plan"))
	for _, s := range steps {
		b.Tasks = append(b.Tasks, *taskCard(s))
	}
	return b
}

// taskCard is t as Slack's task_card block.
func taskCard(t connectors.Task) *slack.TaskCardBlock {
	card := &slack.TaskCardBlock{Type: slack.MBTTaskCard, TaskID: t.ID, Title: truncate(t.Title, maxTaskText), Status: slack.TaskCardStatus(t.Status)}
	card.Details, card.Output = richText(t.Details), richText(t.Output)
	return card
}

// richText is text as a rich_text block of one section, nil for "".
func richText(text string) *slack.RichTextBlock {
	if text == "" {
		return nil
	}
	return slack.NewRichTextBlock("", slack.NewRichTextSection(slack.NewRichTextSectionTextElement(truncate(text, maxTaskText), nil)))
}
