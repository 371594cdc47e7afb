// The read models' access to the database is the store's ReadStore; re-exported so each read model
// imports it from beside itself.
export { ReadStore } from '../store';
