// "How to write stored procedures, triggers, and UDFs": the validation pre-trigger, unchanged but
// for comments: it adds a timestamp to an item created without one.
function validateToDoItemTimestamp() {
    var context = getContext();
    var request = context.getRequest();
    var itemToCreate = request.getBody();
    if (!("timestamp" in itemToCreate)) {
        var ts = new Date();
        itemToCreate["timestamp"] = ts.getTime();
    }
    request.setBody(itemToCreate);
}
