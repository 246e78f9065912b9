module scriptorium.dev/pause

go 1.24
