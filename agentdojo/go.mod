module github.com/intentplane/intentplane/agentdojo

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/google/go-cmp v0.7.0
	github.com/intentplane/intentplane v0.0.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/cedar-policy/cedar-go v1.9.1 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	golang.org/x/exp v0.0.0-20230224173230-c95f2b4c22f2 // indirect
)

replace github.com/intentplane/intentplane => ../
