package intent

// Level is an approval level: what a human must grant before an operation
// executes. Levels are ordered: LevelAuto < LevelConfirm < LevelFourEyes.
type Level string

// The approval levels. A policy's approval guard names the level it
// requires with the annotation @approval("confirm") or
// @approval("four_eyes").
const (
	LevelAuto     Level = "auto"      // no human needed
	LevelConfirm  Level = "confirm"   // one human confirms the exact operation
	LevelFourEyes Level = "four_eyes" // two distinct humans approve it
)

// Rank orders levels: 0 for auto, 1 for confirm, 2 for four_eyes and -1 for
// an unknown level (which callers must treat as unsatisfiable).
func (l Level) Rank() int {
	switch l {
	case LevelAuto:
		return 0
	case LevelConfirm:
		return 1
	case LevelFourEyes:
		return 2
	}
	return -1
}

// Valid reports whether l is one of the three levels.
func (l Level) Valid() bool { return l.Rank() >= 0 }
