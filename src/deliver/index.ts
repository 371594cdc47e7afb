export { Deliverer, retryDelay, DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_FOR_MS, MAX_RETRY_DELAY_MS, type DelivererOptions, type DeliveryOutcome } from './deliverer';
export { closedDay, periodSignals, planFeed, planSignals, DEFAULT_GRACE_MS, FEED_COALESCE_MS, PERIOD_DAYS } from './plan';
export { post, signature, urlProblem, MAX_ANSWER_BYTES, TIMEOUT_MS } from './post';
export { addressProblem } from './address';
export { KafkaElection, LazyElection, leaderGroup, DEFAULT_LEADER_TOPIC } from './election';
