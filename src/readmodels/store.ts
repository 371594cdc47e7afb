// The read models' one door to the store: src/store/reads names what they may use (the ReadStore,
// the store's named reads, the writer's arithmetic). Every read model imports the store from here.
export * from '../store/reads';
