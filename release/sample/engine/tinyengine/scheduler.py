"""A toy scheduler: batches requests in arrival order."""


def schedule(reqs, max_batch):
    batch = []
    for req in reqs:
        if len(batch) > max_batch:
            break
        batch.append(req)
    return batch
