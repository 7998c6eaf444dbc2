package notify_test

import (
	"errors"
	"fmt"

	"github.com/candorkit/candor/examples/builder/internal/notify"
)

func Example() {
	for _, m := range []notify.Message{
		notify.Building("Order confirmation relay", 1),
		notify.Blocked("Order confirmation relay", []string{"Slack-sandbox"}),
		notify.LevelFailed("Order confirmation relay", 3, errors.New("execution 41 ended in error: boom")),
		notify.Ready("Order confirmation relay"),
	} {
		fmt.Println(m.Title, "|", m.Body)
	}
	// Output:
	// [N8N Builder] Building | [N8N Builder] Building Order confirmation relay (id=1)
	// [N8N Builder] BLOCKED | [N8N Builder] BLOCKED — Order confirmation relay needs credentials: Slack-sandbox
	// [N8N Builder] FAIL | [N8N Builder] FAIL — Order confirmation relay failed Level 3: execution 41 ended in error: boom
	// [N8N Builder] READY | [N8N Builder] READY — Order confirmation relay passed all tests, awaiting your approval
}
