module example.com/agenttelemetry

go 1.19
