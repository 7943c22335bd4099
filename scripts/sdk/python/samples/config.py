# The connection settings of the Azure Cosmos DB Python samples beside this file, for `cosmoql serve`.
# This is the one file here that is ours (see README.md): the samples import it as `config` and read
# `config.settings`. run.sh sets the variables; the endpoint and the key have no default, so a sample
# started without them stops at once instead of talking to some other account.
import os

settings = {
    'host': os.environ['ACCOUNT_HOST'],
    'master_key': os.environ['ACCOUNT_KEY'],
    'database_id': os.environ.get('COSMOS_DATABASE', 'cosmoql-samples'),
    'container_id': os.environ.get('COSMOS_CONTAINER', 'cosmoql-samples-container'),
    'container_mh_id': os.environ.get('COSMOS_CONTAINER_MH', 'cosmoql-samples-container-mh'),
    # Only the Azure AD samples, which are not run here, read these.
    'tenant_id': os.environ.get('TENANT_ID', ''),
    'client_id': os.environ.get('CLIENT_ID', ''),
    'client_secret': os.environ.get('CLIENT_SECRET', ''),
}
