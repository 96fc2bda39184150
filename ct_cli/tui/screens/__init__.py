"""The TUI's screens, one module each: the job picker (`jobs`) and a job's log screen (`logs`)."""
