"""The live imitation game: hub, game sessions, the AI seat, the cluster over Redis, the store writers and the websocket protocol."""
