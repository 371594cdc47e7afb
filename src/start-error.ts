/**
 * A start-up failure a person must fix (port taken, database unusable, Kafka unreachable): one line
 * says which, and the CLI exits 2. A module of its own, so the CLI can tell it apart without
 * loading the whole service for commands that never start it.
 */
export class StartError extends Error {}
