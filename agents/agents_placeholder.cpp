namespace agents {}
