package main

import (
	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
)

// phrasers are the packs' phrasings of their actions, for the approval
// page: each pack says how its operations read for the person asked to
// approve them.
func phrasers() []approval.Phraser {
	return []approval.Phraser{ap.Phraser()}
}
