"""Agent code behind an operating-system wall: bubblewrap namespaces, rlimits,
a cgroup, and a job folder that is the only part of the project it sees."""
