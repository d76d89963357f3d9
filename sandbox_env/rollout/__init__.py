"""The rollout core, the model's two tools, and the runtime image every sandbox starts from."""
