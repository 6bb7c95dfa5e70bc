/** A validated page request of a list endpoint. */
export interface Page {
  limit: number;
  offset: number;
}
