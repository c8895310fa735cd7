"""ROS 2 layer of dodo_sim: the graph contract, the shared node runtime, parameters and the nodes."""
